fuzz_httpc_SRC := common/httpc.c
