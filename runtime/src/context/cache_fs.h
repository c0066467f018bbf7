/* cache_fs.h -- the file-system side of mgen_cache_save: which file a path names (symbolic
 * links followed, nothing but a regular file or nothing), the writers' lock beside it, and the
 * temporary file renamed over it. POSIX, no CUDA; messages go to the context's last error.
 */
#ifndef MGEN_CACHE_FS_H
#define MGEN_CACHE_FS_H

#include <limits.h>
#include <sys/types.h>

#include "context/internal.h"

/* The file a save writes: `path` with its symbolic links followed (at most 16; relative targets
 * from the link's directory), so that lock, temporary file and rename are the target's and the
 * link stays; a dangling link names the file to create. OK, ERR_INVALID_ARG (too long), ERR_IO. */
mgen_status mgen__cache_follow_links(mgen_ctx *ctx, const char *path, char real[PATH_MAX]);

/* Before anything is created beside it: `real` must be absent or a regular file (ERR_IO
 * otherwise: a FIFO, a device, a directory), and a non-empty file must be an mgen cache
 * (ERR_CACHE_FORMAT otherwise: it is never replaced). Only its header is parsed here: the
 * records are the save's to read, under the lock. */
mgen_status mgen__cache_check_target(mgen_ctx *ctx, const char *real);

/* The writers' lock: flock on `real`.lock, a file that exists only while a save holds it (the
 * holder removes it before letting go; a waiter that then gets the lock of a removed file tries
 * again). It holds "mgen-cache-lock pid N", which names the holder to a waiter that gives up:
 * the wait is bounded by MGEN_CACHE_LOCK_TIMEOUT seconds (default 10), then ERR_IO. A file of
 * that name that is not a regular file or holds anything else is refused (ERR_IO), not used. */
typedef struct mgen__cache_lock_file {
  int fd;
  char path[PATH_MAX];
} mgen__cache_lock_file;

#define MGEN__CACHE_LOCK_TIMEOUT_S 10.0
mgen_status mgen__cache_lock(mgen_ctx *ctx, const char *real, mgen__cache_lock_file *lock);
void mgen__cache_unlock(mgen__cache_lock_file *lock); /* removes the lock file, then releases it */

/* Under the lock: removes `real`.tmp.XXXXXX files (six letters or digits, the pattern of
 * mgen__cache_temp_open) that are regular, ours (same user) and older than
 * MGEN__CACHE_STALE_TEMP_S: left by a save killed while writing (a live save's temporary exists
 * only under the lock, so this only guards against locks that do not work, e.g. some network
 * file systems). Nothing else is touched. Best effort: failures are ignored. */
#define MGEN__CACHE_STALE_TEMP_S 60
void mgen__cache_clean_temps(mgen_ctx *ctx, const char *real);

/* Creates `real`.tmp.XXXXXX (O_EXCL, random name) into tmp. mode >= 0: the permission bits it
 * gets (an existing file's, kept); -1: 0666 less the umask, as any new file. Returns the fd or
 * -1 (errno set). */
int mgen__cache_temp_open(const char *real, int mode, char tmp[PATH_MAX]);

#endif /* MGEN_CACHE_FS_H */
