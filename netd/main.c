/*
 * netd - network egress policy controller and DNS-filtering proxy.
 * Entry point only; see netd/cli/cli.c.
 */
#include "netd/cli/cli.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
