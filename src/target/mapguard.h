/*
 * File images framewalk maps from a target's files, guarded against the
 * file being cut short under them. A target's owner may truncate a file
 * framewalk has mapped; a read of a page past the new end raises SIGBUS,
 * which would end framewalk. While an image is guarded, such a fault
 * (BUS_ADRERR, inside its bounds) is answered by a page of zeros mapped in
 * place of the missing one, and the read is made again: hostile bytes,
 * which every reader checks anyway (the kernel drops a private copy past
 * the cut too, so pinned pages there read as zeros as well). Counted; any
 * other SIGBUS goes to the handler there was before (by default the
 * process ends).
 */
#ifndef FRAMEWALK_TARGET_MAPGUARD_H
#define FRAMEWALK_TARGET_MAPGUARD_H

#include <stddef.h>

/*
 * Guard [image, image + size) until map_unguard, which must come before it
 * is unmapped; the handler is put in place (again, if something replaced it
 * since). Up to 4096 images at once; more are not guarded. Images are
 * guarded and unguarded by one thread at a time.
 */
void map_guard(const void *image, size_t size);
void map_unguard(const void *image);
/* How many pages were read as zeros so far (the process's). */
unsigned long map_guard_cut_pages(void);

#endif
