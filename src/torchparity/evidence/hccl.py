"""c10d facts: the dtypes torch_npu's HCCL process group accepts, per c10d op and chip.

The ``c10d.*`` rules of the Ascend profiles come from these, as the ``aten.*`` rules come
from the kernel facts (:mod:`.kernels`): ``devices/profiles/sources/ascend-hccl.yaml`` records,
with its repository path:line at one Ascend/pytorch commit, what
``torch_npu/csrc/distributed/ProcessGroupHCCL.cpp`` and ``HCCLUtils.cpp`` do with a tensor's
dtype (the ScalarType -> HcclDataType map, the ``checkSupportedDataType`` set of the reducing
collectives, the bool/uint8 casts). The file is data read by hand from those lines, not
extracted: the process group is one C++ file whose checks are calls, not lists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional

from pydantic import BaseModel, ConfigDict

from ..yamlmodel import load_yaml_model


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChipCollective(_Strict):
    dtypes: List[str]  # what the process group hands to HCCL for this op on this chip
    source: str  # path:line in ``repo`` at ``commit``


class CollectiveFacts(_Strict):
    call: str  # the ProcessGroupHCCL method the op reaches
    chips: Optional[Dict[str, ChipCollective]] = None
    refused: Optional[str] = None  # path:line where the group refuses the op outright


class HcclFacts(_Strict):
    repo: str
    commit: str
    chips: Dict[str, str]  # architecture -> products, as the source tells them apart
    facts: Dict[str, str]  # the general findings, each with its path:line
    ops: Dict[str, CollectiveFacts]

    def source(self, where: str) -> str:
        return f"{self.repo}@{self.commit[:12]} {where}"


def load_hccl_facts(path: Path) -> HcclFacts:
    return load_yaml_model(path, HcclFacts, what="c10d (HCCL) facts")
