test_cache_SRC := dnsproxy/cache.c dnsproxy/wire.c common/addr.c
