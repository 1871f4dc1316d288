package io.streamspark.hadoop;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;

import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's local file system (with its checksum files), setting permissions in-process.
 *
 * <p>Without Hadoop's native library, {@link RawLocalFileSystem} runs a {@code chmod} process for
 * every file and directory it creates (and {@link LocalFileSystem} for each checksum file too):
 * about nine per stateful micro-batch of a local Spark session (offset and commit logs, state
 * changelogs). This class sets the same mode through the file system's {@code unix:mode}
 * attribute instead, as {@code chmod} would: the permission's bits including the sticky bit,
 * and a directory keeps its set-user-ID and set-group-ID bits. Where that attribute is not
 * available it does what Hadoop does. Everything else is Hadoop's.
 */
public class NioLocalFileSystem extends LocalFileSystem {

  public NioLocalFileSystem() {
    super(new Raw());
  }

  /** The raw (checksum-less) file system under {@link NioLocalFileSystem}. */
  public static class Raw extends RawLocalFileSystem {

    /** chmod(1)'s set-user-ID and set-group-ID bits, which it leaves on a directory. */
    private static final int SET_ID_BITS = 06000;

    @Override
    public void setPermission(Path p, FsPermission permission) throws IOException {
      java.nio.file.Path file = pathToFile(p).toPath();
      int mode = permission.toShort() & 01777;
      try {
        if (Files.isDirectory(file, LinkOption.NOFOLLOW_LINKS)) {
          mode |= ((Integer) Files.getAttribute(file, "unix:mode")) & SET_ID_BITS;
        }
        Files.setAttribute(file, "unix:mode", mode);
      } catch (NoSuchFileException e) {
        throw new FileNotFoundException("File " + p + " does not exist");
      } catch (UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
        super.setPermission(p, permission); // no unix view here: Hadoop's own way
      }
    }
  }
}
