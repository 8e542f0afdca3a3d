/* signals.c: the flag SIGINT and SIGTERM set, which the option parser (cli.c) arms and the
 * driver (drive.c) and the engines poll; apart from both, so that neither calls the other back
 * (cli.c calls nothing of drive.c). */
#include "cli.h"
#include <signal.h>

volatile sig_atomic_t vla_cli_stop;
static void on_signal(int sig) { vla_cli_stop = sig; }

void vla_cli_signals(void)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}
