fuzz_ctcut_SRC := common/addr.c netd/trail/ctmsg.c common/nlbuf.c
