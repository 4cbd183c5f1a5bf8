# SPDX-License-Identifier: BSD-3-Clause
# A test that cannot run here fails with the reason (ctest: cmake -DMESSAGE=... -P Fail.cmake).
message(FATAL_ERROR "${MESSAGE}")
