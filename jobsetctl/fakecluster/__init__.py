"""The fake cluster: object store with admission, controllers, scheduler, kubelet, all on a virtual clock."""
