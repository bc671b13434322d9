test_fsutil_SRC := common/fsutil.c
