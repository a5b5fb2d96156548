/*
 * api_query: the query endpoints' shared machinery: per-worker-thread
 * search scratch (a nav_query sized --max-nodes and result buffers,
 * allocated lazily on a thread's first query and freed when the thread
 * exits), so a query allocates nothing beyond its JSON.
 */
#ifndef API_QUERY_H
#define API_QUERY_H

#include "api/api.h"

/* Prepares the per-thread scratch key for cfg; 0 on success. */
int api_query_init(const api_config *cfg);
/* After the worker threads have exited: releases what init created. */
void api_query_shutdown(void);

#endif
