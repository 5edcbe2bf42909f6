;;; mdseek with Emacs eglot (Emacs 29+, or Emacs 28 with the eglot package)
;; Requires markdown-mode (MELPA/NonGNU ELPA `markdown-mode', Debian
;; `elpa-markdown-mode'): eglot starts mdseek in its buffers. Needs `mdseek' on
;; PATH (README "Install"), or replace "mdseek" with your venv's bin/mdseek.
;; M-x xref-find-apropos searches sections by meaning (workspace/symbol);
;; eldoc shows the hover preview of a link's target section; M-. follows links;
;; flymake lists broken links; M-x eglot-code-actions fixes a broken anchor.

(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               '((markdown-mode gfm-mode markdown-ts-mode) . ("mdseek" "serve")))
  ;; Optional settings, sent as workspace/configuration under "mdseek".
  (setq-default eglot-workspace-configuration
                '(:mdseek (:searchLimit 20 :hoverRelated 5))))

(add-hook 'markdown-mode-hook #'eglot-ensure)
