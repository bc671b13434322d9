/*
 * fake_nft - a stand-in nf_tables for fw (netd/fw/kernel.h), for tests that
 * must run without root: it parses the batches fw would send to the kernel
 * (the same bytes) with libnftnl's parsers, applies them to an in-memory
 * model of the tables, whole or not at all, and prints the model with
 * libnftnl's own printers.  Gets and dumps are not modelled (-EOPNOTSUPP).
 */
#ifndef TESTS_GOLDEN_FAKE_NFT_H
#define TESTS_GOLDEN_FAKE_NFT_H

#include <stdio.h>

#include "netd/fw/kernel.h"

/* fake_nft_new() - an empty model.  Free with ->ops->free() (or give it to fw_open_with()). */
struct fw_kernel *fake_nft_new(void);

/*
 * fake_nft_print() - every table of @k (sorted by family and name), its
 * chains with their rules and its sets and maps with their elements (in
 * the order the kernel lists them; elements sorted by key), and its
 * objects, to @out.
 */
void fake_nft_print(struct fw_kernel *k, FILE *out);

#endif
