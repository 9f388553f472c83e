from redis.asyncio.client import Redis as Redis
from redis.asyncio.cluster import RedisCluster as RedisCluster
from redis.asyncio.connection import BlockingConnectionPool as BlockingConnectionPool
from redis.asyncio.connection import ConnectionPool as ConnectionPool
