test_tbucket_SRC :=
