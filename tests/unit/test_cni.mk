test_cni_SRC := cni-plugin/cni.c cni-plugin/chain.c
