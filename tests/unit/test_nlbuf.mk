test_nlbuf_SRC :=
