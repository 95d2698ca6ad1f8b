/*
 * The name of a user id, for `framewalk check`. Two implementations of this
 * one function, chosen by the build: username_nss.c (getpwuid: every NSS
 * source, LDAP and sssd included) in the ordinary build, username_files.c
 * (/etc/passwd only, no NSS modules to load) in the static one.
 */
#ifndef FW_AUDIT_USERNAME_H
#define FW_AUDIT_USERNAME_H

#include <stddef.h>
#include <sys/types.h>

/* Writes uid's name to buf (NUL-terminated, truncated to size), or "?" when
 * the user is unknown. size must be at least 2. */
void audit_user_name(uid_t uid, char *buf, size_t size);

#endif
