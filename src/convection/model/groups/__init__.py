"""Heat's group semantics as pure functions: no I/O, no clock, no store.

ResourceGroup, ResourceChain and AutoScalingGroup are nested stacks whose
templates are assembled from properties and from what the group already
holds. Everything Heat decides about them (member names, which members a
rolling update touches first, how many batches, whether they fit in the
stack timeout, how far a scaling policy moves the group, whether a cooldown
still runs) is arithmetic on values, and lives here, so the plugins in
``resources/heat/`` only carry those values to and from a child stack.

* :mod:`.rolling` - batch arithmetic (``heat/scaling/rolling_update.py``,
  ``ResourceGroup._get_batches``, ``InstanceGroup._get_batches``) and the
  timeout check.
* :mod:`.members` - member names, ``%index%`` substitution, removal policies
  (the name blacklist) and the member definitions of each batch
  (``heat/scaling/template.py``).
* :mod:`.scaling` - ``calculate_new_capacity`` and cooldown.
* :mod:`.nested` - the child templates: ResourceGroup, ResourceChain,
  AutoScalingGroup.
* :mod:`.attributes` - the group attributes (``refs``, ``refs_map``,
  ``resource.N``, ``resource.N.attr``, per-member lists).
"""
