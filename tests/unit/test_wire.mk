test_wire_SRC := dnsproxy/wire.c common/addr.c
