from enum import Enum
from typing import Any

import numpy as np
import numpy.typing as npt

class GraphOptimizationLevel(Enum):
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99

class SessionOptions:
    intra_op_num_threads: int
    inter_op_num_threads: int
    graph_optimization_level: GraphOptimizationLevel
    enable_mem_pattern: bool
    enable_cpu_mem_arena: bool
    log_severity_level: int
    def add_session_config_entry(self, key: str, value: str) -> None: ...

class NodeArg:
    name: str
    shape: list[Any]  # ints, or names of dimensions the model leaves open
    type: str

class InferenceSession:
    def __init__(
        self,
        path_or_bytes: str | bytes,
        sess_options: SessionOptions | None = None,
        providers: list[str] | None = None,
        **kwargs: Any,
    ) -> None: ...
    def get_inputs(self) -> list[NodeArg]: ...
    def get_outputs(self) -> list[NodeArg]: ...
    def run(
        self, output_names: list[str] | None, input_feed: dict[str, npt.NDArray[Any]]
    ) -> list[npt.NDArray[np.float32]]: ...
