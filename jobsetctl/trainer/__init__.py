"""Kubeflow Trainer v2: TrainJob and (Cluster)TrainingRuntime API, webhooks, runtimes and expansion."""
