"""Parsed CEL rules of the CRD schemas under jobsetctl/schemas (generated: do not edit).

Written by ``python -m jobsetctl.admission.cel_builtin_gen``; see that module for why.
"""

from __future__ import annotations

from jobsetctl.admission.cel_parse import (  # noqa: F401 (names the generated table may use)
    And,
    Binary,
    Call,
    Comprehension,
    Conditional,
    CreateList,
    CreateMap,
    Has,
    Ident,
    Index,
    Literal,
    Negate,
    Node,
    Not,
    Or,
    Select,
)

ASTS: dict[str, Node] = {
    "!(has(self.startupPolicy) && self.startupPolicy.startupPolicyOrder == 'InOrder' && self.replicatedJobs.exists(x, has(x.dependsOn)))":
        Not(operand=And(left=And(left=Has(operand=Ident(name='self'), field='startupPolicy'), right=Binary(op='==', left=Select(operand=Select(operand=Ident(name='self'), field='startupPolicy', optional=False), field='startupPolicyOrder', optional=False), right=Literal(value='InOrder'))), right=Comprehension(macro='exists', target=Select(operand=Ident(name='self'), field='replicatedJobs', optional=False), variable='x', args=(Has(operand=Ident(name='x'), field='dependsOn'),)))),
    "!self.exists(c, c == 'node')":
        Not(operand=Comprehension(macro='exists', target=Ident(name='self'), variable='c', args=(Binary(op='==', left=Ident(name='c'), right=Literal(value='node')),))),
    '[has(self.torch), has(self.mpi), has(self.jax), has(self.xgboost),has(self.flux)].filter(x, x).size() <= 1':
        Binary(op='<=', left=Call(function='size', target=Comprehension(macro='filter', target=CreateList(items=(Has(operand=Ident(name='self'), field='torch'), Has(operand=Ident(name='self'), field='mpi'), Has(operand=Ident(name='self'), field='jax'), Has(operand=Ident(name='self'), field='xgboost'), Has(operand=Ident(name='self'), field='flux'))), variable='x', args=(Ident(name='x'),)), args=()), right=Literal(value=1)),
    "self == '' || self.matches('^[A-Za-z][A-Za-z0-9+.-]*://.+$')":
        Or(left=Binary(op='==', left=Ident(name='self'), right=Literal(value='')), right=Call(function='matches', target=Ident(name='self'), args=(Literal(value='^[A-Za-z][A-Za-z0-9+.-]*://.+$'),))),
    'self == oldSelf':
        Binary(op='==', left=Ident(name='self'), right=Ident(name='oldSelf')),
    'self >= 1':
        Binary(op='>=', left=Ident(name='self'), right=Literal(value=1)),
    "self in ['trainer.kubeflow.org/trainjob-controller', 'kueue.x-k8s.io/multikueue']":
        Binary(op='in', left=Ident(name='self'), right=CreateList(items=(Literal(value='trainer.kubeflow.org/trainjob-controller'), Literal(value='kueue.x-k8s.io/multikueue')))),
    "self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')":
        Call(function='matches', target=Select(operand=Select(operand=Ident(name='self'), field='metadata', optional=False), field='name', optional=False), args=(Literal(value='^[a-z]([-a-z0-9]*[a-z0-9])?$'),)),
    'self.templates.all(t, !has(t.metadata.namespace) || size(t.metadata.namespace) == 0)':
        Comprehension(macro='all', target=Select(operand=Ident(name='self'), field='templates', optional=False), variable='t', args=(Or(left=Not(operand=Has(operand=Select(operand=Ident(name='t'), field='metadata', optional=False), field='namespace')), right=Binary(op='==', left=Call(function='size', target=None, args=(Select(operand=Select(operand=Ident(name='t'), field='metadata', optional=False), field='namespace', optional=False),)), right=Literal(value=0))),)),
    'size(self.metadata.name) <= 63':
        Binary(op='<=', left=Call(function='size', target=None, args=(Select(operand=Select(operand=Ident(name='self'), field='metadata', optional=False), field='name', optional=False),)), right=Literal(value=63)),
}
