fuzz_sniflow_SRC := netd/sni/flow.c netd/sni/sni.c common/addr.c
