fuzz_cni_ipam_SRC := cni-plugin/cni.c
