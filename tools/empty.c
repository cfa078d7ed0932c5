/* libtilec.so is assembled from the tilec_front and tilec_back archives;
 * CMake needs one source file for the target. */
typedef int tilec_empty_translation_unit_;
