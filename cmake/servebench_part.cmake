# servebench_add_part(NAME SOURCES a.cpp … DEPS part … LIBS target … TESTS a_test.cpp …)
#
# One part = one static library `servebench_<NAME>` whose public header lives in src/<NAME>/.
# DEPS names other parts (the one-way data flow is written down here, in each part's
# CMakeLists.txt); LIBS names third-party targets. TESTS become one GoogleTest executable
# `<NAME>_tests` registered with CTest.
function(servebench_add_part NAME)
  cmake_parse_arguments(P "" "" "SOURCES;DEPS;LIBS;TESTS;TEST_LIBS" ${ARGN})
  set(target servebench_${NAME})
  add_library(${target} STATIC ${P_SOURCES})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  foreach(dep IN LISTS P_DEPS)
    target_link_libraries(${target} PUBLIC servebench_${dep})
  endforeach()
  target_link_libraries(${target} PUBLIC ${P_LIBS})
  if(SERVEBENCH_BUILD_TESTS AND P_TESTS)
    add_executable(${NAME}_tests ${P_TESTS})
    target_link_libraries(${NAME}_tests PRIVATE ${target} ${P_TEST_LIBS} GTest::gtest_main
                                                GTest::gmock)
    target_compile_definitions(${NAME}_tests
                               PRIVATE SERVEBENCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
    gtest_discover_tests(${NAME}_tests DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)
  endif()
endfunction()
