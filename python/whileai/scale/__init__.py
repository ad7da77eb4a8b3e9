"""Past one machine: decontaminate, hack_scan and simulate on a Ray cluster, same answers.

Install the extra (``pip install 'whileai[ray]'``); Ray is imported only when one of these is
called, and nothing else in whileai imports this package. Each call returns what the
single-process call returns for the same input: reports ``==``, rows equal as sets.

- :func:`decontaminate_dataset`: JSONL files read and checked span by span by Ray tasks, or a
  Ray Dataset checked batch by batch by ``map_batches``; the eval index is put in the object
  store once.
- :func:`hack_scan_dataset`: features made and the scan summed where the rows live.
- :func:`simulate_sharded`: a run's tasks split by identity across Ray tasks, a cluster-wide
  limit per model endpoint, ``output=`` per shard then merged.

>>> import whileai.scale as scale
>>> sorted(scale.__all__)[:2]
['LimitedAgent', 'decontaminate_dataset']
"""

from whileai.scale.decontam import decontaminate_dataset
from whileai.scale.hack_scan import hack_scan_dataset
from whileai.scale.simulate import shard_of, simulate_sharded
from whileai.scale.slots import LimitedAgent, endpoint_slots

__all__ = [
    "LimitedAgent",
    "decontaminate_dataset",
    "endpoint_slots",
    "hack_scan_dataset",
    "shard_of",
    "simulate_sharded",
]
