"""Bridges to the libraries practitioners train with (each needs its optional extra).

* :mod:`privamp.integrations.opacus` — an Opacus accountant (and ``PrivacyEngine``) that accounts
  for the sampler actually used (``pip install 'privamp[opacus]'``);
* :mod:`privamp.integrations.dp_accounting` — dp_accounting's ``DpEvent`` conversion and a
  ``PrivacyAccountant`` (``pip install 'privamp[dp_accounting]'``).

Nothing is imported here: ``import privamp`` never imports torch, Opacus or dp_accounting.
"""
