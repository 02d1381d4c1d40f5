"""The compute layer: resource tracking on a compute host, on objects only.

Split by concern (doc/source/user/tracker.rst):

* ``driver`` / ``fake_driver``: what the hypervisor reports;
* ``payload``: the allocation payload rules (one instance -> amounts
  per provider);
* ``usage``: capacity and usage accounting of one node;
* ``pci``: PCI device selection and claims;
* ``claims``: the claim context managers;
* ``report`` / ``report_local`` / ``report_http``: reporting clients;
* ``tracker``: the ResourceTracker tying them together;
* ``manager``: compute-manager operations on objects.

Nothing here touches the database directly: every read and write goes
through ``resobj.objects`` or a reporting client (a test enforces it).
"""
