# What `cmake --install` puts where, and the Debian package CPack makes of it
# (scripts/package.sh: build/servebench_<version>_<arch>.deb).
#
# Installed: the binary, its man page, the documentation, and the engine profiles (which
# `servebench sim --engine-profile` takes as a path).
include(GNUInstallDirs)

# `cmake --install` and CPack install what is built (scripts/build.sh builds the binary only),
# rather than building every test and benchmark first.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

install(TARGETS servebench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/docs/servebench.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
file(GLOB servebench_docs ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${servebench_docs}
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/profiles/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/servebench/profiles FILES_MATCHING PATTERN "*.yaml")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME servebench)
set(CPACK_PACKAGE_VENDOR servebench)
set(CPACK_PACKAGE_CONTACT "servebench maintainers <servebench@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "benchmark for LLM inference serving")
set(CPACK_PACKAGE_DESCRIPTION
    "servebench run drives an OpenAI-compatible server (vLLM, SGLang, TGI, llama.cpp...) the way
vllm bench serve does, from one C++ binary; servebench sim is a simulated vLLM-shaped server,
the embedded default target of servebench run.")
set(CPACK_PACKAGE_INSTALL_DIRECTORY servebench)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
# The shared libraries the binary links (libcurl4, libsimdjson14, libyaml-cpp0.7, libfmt9, ICU,
# SentencePiece, PLplot…) come from dpkg-shlibdeps; PLplot opens its cairo driver at run time,
# which dpkg-shlibdeps cannot see, and the charts are drawn with DejaVu.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "plplot-driver-cairo, fonts-dejavu-core")
# HTTPS targets need the CA certificates.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "ca-certificates")
include(CPack)
