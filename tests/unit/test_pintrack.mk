test_pintrack_SRC := dnsproxy/pintrack.c common/addr.c
