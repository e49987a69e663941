/*
 * banned.h: functions that invite buffer overruns, made compile errors.
 * Include it last in every .c file. Use snprintf, memcpy with a length,
 * strtok_r or a hand-written scan instead.
 */
#ifndef CPULEDGER_CORE_BANNED_H
#define CPULEDGER_CORE_BANNED_H

#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef gets
#define gets(x) BANNED(gets)

#endif
