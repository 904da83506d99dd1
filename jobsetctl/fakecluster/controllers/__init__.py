"""Controllers of the fake cluster, one module per upstream controller.

* :mod:`.job` — the Kubernetes Job controller (``batch/v1``; helpers in ``job_*.py``);
* :mod:`.jobsetpods` — the JobSet pod controller's exclusive-placement repair loop (jobset.md §3.6);
* the JobSet and TrainJob controllers (other modules of this package).

Every controller runs in ``render`` and in ``simulate`` alike: both create exactly the same objects
through the same code (issue #3).
"""
