/** The timer only build B starts: its length is its mark in a history (build A has none this short). */
export const BUILD_B_TIMER_MS = 17;
