"""Images a node has besides its built-in ones (kubelet/images.py): a user's image map (`--image-map FILE`:
an image pattern run as a local command, imagemap.py) and real images loaded from docker-save or OCI layout
archives (`mini-kube image load`: archive.py reads them, unpack.py unpacks their layers safely, store.py keeps
them content-addressed under the data dir). Both resolve to a LocalImage (local.py), what a container of that
image runs with."""
