fuzz_cni_conf_SRC := cni-plugin/cni.c
