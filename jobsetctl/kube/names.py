"""apimachinery's name validators (``k8s.io/apimachinery/pkg/util/validation``), with their exact messages.

Each function returns the list of problems, empty when the value is valid, as the Go functions do, so a
caller can join them or report each. The double space in ``'my-name',  or`` is apimachinery's own.
"""

from __future__ import annotations

import functools
import re

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
DNS1035_LABEL_MAX = 63
LABEL_VALUE_MAX = 63
QUALIFIED_NAME_MAX = 63

_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = _DNS1123_LABEL + r"(\." + _DNS1123_LABEL + ")*"
_DNS1035_LABEL = "[a-z]([-a-z0-9]*[a-z0-9])?"
_LABEL_VALUE = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
_QUALIFIED_NAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"

_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN)
_DNS1035_LABEL_RE = re.compile(_DNS1035_LABEL)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE)
_QUALIFIED_NAME_RE = re.compile(_QUALIFIED_NAME)

DNS1123_LABEL_ERROR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    f"'{_DNS1123_LABEL}')"
)
DNS1123_SUBDOMAIN_ERROR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    f"'{_DNS1123_SUBDOMAIN}')"
)
DNS1035_LABEL_ERROR = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
    f"validation is '{_DNS1035_LABEL}')"
)
LABEL_VALUE_ERROR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    f"for validation is '{_LABEL_VALUE}')"
)
QUALIFIED_NAME_ERROR = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    f"character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '{_QUALIFIED_NAME}')"
)


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def empty_error() -> str:
    return "must be non-empty"


def is_dns1123_label(value: str) -> list[str]:
    errors: list[str] = []
    if len(value) > DNS1123_LABEL_MAX:
        errors.append(max_len_error(DNS1123_LABEL_MAX))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        errors.append(DNS1123_LABEL_ERROR)
    return errors


def is_dns1123_subdomain(value: str) -> list[str]:
    errors: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errors.append(max_len_error(DNS1123_SUBDOMAIN_MAX))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errors.append(DNS1123_SUBDOMAIN_ERROR)
    return errors


def is_dns1035_label(value: str) -> list[str]:
    errors: list[str] = []
    if len(value) > DNS1035_LABEL_MAX:
        errors.append(max_len_error(DNS1035_LABEL_MAX))
    if not _DNS1035_LABEL_RE.fullmatch(value):
        errors.append(DNS1035_LABEL_ERROR)
    return errors


def is_valid_label_value(value: str) -> list[str]:
    errors: list[str] = []
    if len(value) > LABEL_VALUE_MAX:
        errors.append(max_len_error(LABEL_VALUE_MAX))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errors.append(LABEL_VALUE_ERROR)
    return errors


def is_qualified_name(value: str) -> list[str]:
    """Label keys and annotation keys: ``[prefix/]name``."""
    # Remembered per key: the same few keys come with every object a controller creates (a simulated
    # cluster admits thousands of Jobs carrying the same dozens of label and annotation keys).
    return list(_qualified_name_errors(value))


@functools.lru_cache(maxsize=4096)
def _qualified_name_errors(value: str) -> tuple[str, ...]:
    return tuple(_check_qualified_name(value))


def _check_qualified_name(value: str) -> list[str]:
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("prefix part " + empty_error())
        else:
            errors.extend("prefix part " + e for e in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name " + QUALIFIED_NAME_ERROR
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errors.append("name part " + empty_error())
    elif len(name) > QUALIFIED_NAME_MAX:
        errors.append("name part " + max_len_error(QUALIFIED_NAME_MAX))
    if name and not _QUALIFIED_NAME_RE.fullmatch(name):
        errors.append("name part " + QUALIFIED_NAME_ERROR)
    return errors


_PATH_RE = re.compile(r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+")
PATH_REGEX = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"


def is_domain_prefixed_path(value: str) -> list[str]:
    """apimachinery ``IsDomainPrefixedPath`` as used for ``managedBy`` and runtimePatches ``manager``.

    Returns detail strings: the first element names the kind of problem (see jobset.md §2.2 #4).
    """
    if not value:
        return ["Required value"]
    host, sep, path = value.partition("/")
    if not sep or not host or not path:
        return ['must be a domain-prefixed path (such as "acme.io/foo")']
    errors = list(is_dns1123_subdomain(host))
    if not _PATH_RE.fullmatch(path):
        errors.append(f"Invalid path (regex used for validation is '{PATH_REGEX}')")
    return errors


def domain_prefixed_path_errors(path: str, value: str) -> list[str]:
    """``IsDomainPrefixedPath(fldPath, value)`` as field error texts: the bad value is the whole value, the
    host part (its DNS-1123 problems) or the path part, as apimachinery reports each problem."""
    from jobsetctl.kube import field

    host, _, rest = value.partition("/")
    messages: list[str] = []
    for detail in is_domain_prefixed_path(value):
        if detail == "Required value":
            messages.append(field.required(path))
        elif detail.startswith("must be a domain-prefixed path"):
            messages.append(field.invalid(path, value, detail))
        elif detail.startswith("Invalid path"):
            messages.append(field.invalid(path, rest, detail))
        else:
            messages.append(field.invalid(path, host, detail))
    return messages
