test_special_SRC := common/special.c common/addr.c
