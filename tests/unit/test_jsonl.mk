test_jsonl_SRC := common/jsonl.c
