"""v22sdk.scale: the scale-out paths (optional extras; nothing here is imported by the default CLI).

* :mod:`v22sdk.scale.inputs`: list a folder or manifest into work items (no Ray needed);
* :mod:`v22sdk.scale.shards`: the sharded token output (``.npz`` shards + ``manifest.json``) and its reader;
* :mod:`v22sdk.scale.ray_jobs`: ``tokenize`` and ``run`` on Ray Data (extra ``v22sdk[ray]``);
* :mod:`v22sdk.scale.ddp`: data-parallel training over ``torch.distributed`` (gloo), started by torchrun;
* :mod:`v22sdk.scale.cli`: the click commands/options the main CLI dispatches ``--backend ray`` and ``--nproc`` to.

The PostgreSQL memory tier lives with the other tiers: :mod:`v22sdk.memory.postgres`.
"""
