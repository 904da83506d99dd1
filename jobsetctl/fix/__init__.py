"""``jobsetctl fix``: validate's findings repaired in place, comments and formatting kept (issue #15).

:mod:`.yamledit` edits round-trip documents and writes back only what changed; :mod:`.registry` holds the
fix of each rule; :mod:`.fixes` the fixes; :mod:`.command` runs validate and applies them; :mod:`.rewrite`
shows (diff), checks or writes the result. ``jobsetctl migrate`` (:mod:`jobsetctl.migrate`) shares all but
the fixes.
"""
