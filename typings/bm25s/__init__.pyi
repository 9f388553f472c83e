from typing import Any

import numpy as np
import numpy.typing as npt

class Tokenized:
    ids: list[list[int]]
    vocab: dict[str, int]

def tokenize(
    texts: str | list[str],
    lower: bool = True,
    stopwords: str | list[str] | None = None,
    stemmer: Any = None,
    show_progress: bool = True,
) -> Tokenized: ...

class BM25:
    def __init__(self, k1: float = 1.5, b: float = 0.75, method: str = "lucene") -> None: ...
    def index(self, corpus: Tokenized, show_progress: bool = True) -> None: ...
    def retrieve(
        self, query_tokens: Tokenized, k: int = 10, show_progress: bool = True
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]: ...
