from typing import Literal, overload

import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_matrix

_Ints = npt.NDArray[np.int32]

@overload
def breadth_first_order(
    csgraph: csr_matrix, i_start: int, directed: bool = True, *, return_predecessors: Literal[True]
) -> tuple[_Ints, _Ints]: ...
@overload
def breadth_first_order(
    csgraph: csr_matrix,
    i_start: int,
    directed: bool = True,
    return_predecessors: Literal[False] = False,
) -> _Ints: ...
def shortest_path(
    csgraph: csr_matrix,
    directed: bool = True,
    unweighted: bool = False,
    indices: int | None = None,
) -> npt.NDArray[np.float64]: ...
def connected_components(
    csgraph: csr_matrix, directed: bool = True, connection: str = "weak"
) -> tuple[int, _Ints]: ...
