"""``jobsetctl simulate``: submit manifests to a fake cluster on a virtual clock and report what happens.

Modules, in the order data flows: :mod:`.scenario` (the Scenario file and its ``scenario-*`` rules),
:mod:`.inputs` (paths to submissions), :mod:`.nodes` (pools and Node manifests), :mod:`.gates` (gates the
inputs need), :mod:`.runner` (the run loop), :mod:`.actions` (faults and operator actions), :mod:`.ledger`
(what the reports need of objects), :mod:`.timeline` (events to spans and rows), then the outputs:
:mod:`.report` (JSON), :mod:`.summary`, :mod:`.gantt` and :mod:`.terminal`, :mod:`.trace`, :mod:`.picture`.
:mod:`.command` ties them together for the CLI.
"""
