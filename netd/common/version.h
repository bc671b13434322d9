/* version.h - netd's version string (`netd --version`, netd_build_info). */
#ifndef NETD_VERSION_H
#define NETD_VERSION_H

#ifndef NETD_VERSION
#define NETD_VERSION "0.1.0"
#endif

#endif
