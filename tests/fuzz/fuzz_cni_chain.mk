fuzz_cni_chain_SRC := cni-plugin/chain.c cni-plugin/cni.c
