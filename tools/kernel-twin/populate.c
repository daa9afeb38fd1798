/* The twin of an `anon` workload with `populate = true` (or without, `touch`): map
 * SIZE MiB of private anonymous memory with MAP_POPULATE, or map it plainly and
 * write one byte per page. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int main(int argc, char **argv) {
	if (argc < 3) { fprintf(stderr, "usage: populate SIZE_MIB populate|touch\n"); return 2; }
	size_t size_bytes = strtoull(argv[1], 0, 0) << 20;
	int populate = strcmp(argv[2], "populate") == 0;
	char *p = mmap(0, size_bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0), -1, 0);
	if (p == MAP_FAILED) { perror("mmap"); return 1; }
	if (!populate)
		for (size_t i = 0; i < size_bytes; i += 4096) p[i] = 1;
	printf("%s %zu MiB done\n", argv[2], size_bytes >> 20);
	return 0;
}
