from redis.backoff import AbstractBackoff

class Retry:
    def __init__(
        self,
        backoff: AbstractBackoff,
        retries: int,
        supported_errors: tuple[type[Exception], ...] = ...,
    ) -> None: ...
