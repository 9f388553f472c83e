from redis.client import Redis as Redis
from redis.exceptions import BusyLoadingError as BusyLoadingError
from redis.exceptions import ConnectionError as ConnectionError
from redis.exceptions import RedisError as RedisError
from redis.exceptions import ResponseError as ResponseError
from redis.exceptions import TimeoutError as TimeoutError

from . import asyncio as asyncio
from . import exceptions as exceptions
