/*
 * lru - the settled list of the SNI checks' flow table (ftab.c, which
 * flow.c and qflow.c share): an intrusive doubly linked list, oldest
 * first, from whose head a full table takes room.  Header only, internal
 * to netd/sni/.
 */
#ifndef NETD_SNI_LRU_H
#define NETD_SNI_LRU_H

#include <stddef.h>

/* A link inside an entry; both NULL while the entry is on no list. */
struct lru_node {
	struct lru_node *prev, *next;
};

/* The list: oldest at head, newest at tail; zeroed = empty. */
struct lru {
	struct lru_node *head, *tail;
};

/* lru_first() - the oldest entry of type @type (its link named @member), or NULL. */
#define lru_first(l, type, member) \
	((l)->head ? (type *)((char *)(l)->head - offsetof(type, member)) : NULL)

/* lru_remove() - take @n off @l (a no-op if it is on no list). */
static inline void lru_remove(struct lru *l, struct lru_node *n)
{
	if (n->prev)
		n->prev->next = n->next;
	else if (l->head == n)
		l->head = n->next;
	if (n->next)
		n->next->prev = n->prev;
	else if (l->tail == n)
		l->tail = n->prev;
	n->prev = n->next = NULL;
}

/* lru_append() - put @n (on no list) at @l's newest end. */
static inline void lru_append(struct lru *l, struct lru_node *n)
{
	n->prev = l->tail;
	n->next = NULL;
	if (l->tail)
		l->tail->next = n;
	else
		l->head = n;
	l->tail = n;
}

#endif
