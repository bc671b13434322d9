test_cache_SRC := dnsproxy/cache.c dnsproxy/wire.c dnsproxy/wire_svcb.c common/addr.c
