# metatemplates/: files are listed here as they are added.
include $(srcdir)/metatemplates/space.mk
