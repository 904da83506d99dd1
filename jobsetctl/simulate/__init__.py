"""``jobsetctl simulate``: submit manifests to a fake cluster on a virtual clock and report what happens.

Modules, in the order data flows: :mod:`.scenario` (the Scenario file and its ``scenario-*`` rules),
:mod:`.inputs` (paths to submissions), :mod:`.nodes` (pools and Node manifests), :mod:`.gates` (gates the
inputs need), :mod:`.runner` (the run loop), :mod:`.actions` (faults and operator actions), :mod:`.ledger`
(what the reports need of objects), :mod:`.timeline` (events to spans and rows of named states, drawn
as :mod:`.chartstyle` says), :mod:`.verdict` (why a workload never started, and whether it could),
then the outputs: :mod:`.report` (JSON), :mod:`.summary`, :mod:`.labels`, :mod:`.gantt` and
:mod:`.terminal`, :mod:`.eventlog`, :mod:`.trace`, :mod:`.picture` (SVG), :mod:`.htmlpage`.
:mod:`.command` ties them together for the CLI.
"""
